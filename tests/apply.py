"""Tiny wrappers that let tests compile any op: the op is a static argument."""


def apply1(f, x):
    return f(x)


def apply2(f, x, y):
    return f(x, y)
