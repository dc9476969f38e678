// expect: ParseError
@@@@ ### !!! ???
