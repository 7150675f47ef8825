"""TVMScript front end: text -> Lark parse (ast.py) -> `tir` dialect MLIR (builder.py).

Entry points: `parser.parse(text, filename=None)` and `parser.load(path)`.
"""
