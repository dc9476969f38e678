// expect: ParseError
"fusion.mesh"() <{sym_name = "m", shape = array<i128: 1>, devices = array<i64: 0>}> : () -> ()
