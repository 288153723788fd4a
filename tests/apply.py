"""Tiny wrappers that let tests compile any op: the op is a static argument."""


def apply1(f, x):
    return f(x)


def apply2(f, x, y):
    return f(x, y)


def apply3(f, x, y, z):
    return f(x, y, z)
