// expect: ParseError
hello world
