"""The template language: AST, parser, checker, compiler and reference evaluator."""
