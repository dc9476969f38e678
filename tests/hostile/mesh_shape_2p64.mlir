// expect: ParseError|VerifyError
fusion.mesh @m shape 18446744073709551616 devices [0]
