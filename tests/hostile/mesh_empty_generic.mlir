// expect: ParseError|VerifyError
"fusion.mesh"() <{sym_name = "m", shape = array<i64>, devices = array<i64>}> : () -> ()
