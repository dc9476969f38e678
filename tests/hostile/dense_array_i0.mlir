// expect: ParseError
"fusion.mesh"() <{sym_name = "m", shape = array<i0>, devices = array<i64: 0>}> : () -> ()
