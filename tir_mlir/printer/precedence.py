"""Python operator precedence, as TVM's doc printer applies it (higher binds tighter)."""

OR, AND, NOT, CMP, ADD, MUL, NEG, ATOM = 1, 2, 3, 4, 6, 7, 8, 10


def wrap(doc: tuple, parent: int, right: bool) -> str:
    """Text of an operand `doc = (text, prec)`, parenthesized where Python would need it.

    Binary operators associate to the left, so a right operand of equal precedence is
    parenthesized too (`a - (b - c)`, and TVM also writes `a + (b + c)`).
    """
    text, prec = doc
    if prec < parent or (right and prec == parent):
        return f"({text})"
    return text
