// expect: ParseError|VerifyError
fusion.mesh @m shape 2x0 devices []
