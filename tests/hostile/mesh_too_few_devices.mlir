// expect: ParseError|VerifyError
fusion.mesh @m shape 2x2 devices [0, 1, 2]
