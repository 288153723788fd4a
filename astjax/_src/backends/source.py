"""AST to Python source, through the standard library's ``ast.unparse``."""
import ast

import gast


def unparse(node):
    tree = gast.gast_to_ast(node)
    ast.fix_missing_locations(tree)
    return ast.unparse(tree)
