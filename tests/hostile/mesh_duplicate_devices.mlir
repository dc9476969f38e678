// expect: ParseError|VerifyError
fusion.mesh @m shape 2 devices [3, 3]
