// expect: ParseError|VerifyError
fusion.mesh @m shape 2 devices ["a", "b"]
