// expect: ParseError|VerifyError
fusion.mesh @m shape 2 devices [0, 1]
fusion.mesh @m shape 2 devices [2, 3]
