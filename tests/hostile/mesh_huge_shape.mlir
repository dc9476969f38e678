// expect: ParseError|VerifyError
fusion.mesh @m shape 9223372036854775807x9223372036854775807 devices [0]
