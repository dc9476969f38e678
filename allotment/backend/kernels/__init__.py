"""One module per kernel kind: its planner hook, its emitter and its launcher lines
(registered in `backend/kernel_kinds.KINDS`), and the shared emitter they build on
(`emitter`)."""
