"""The op library users call, written only with staging primitives and other prelude functions."""
