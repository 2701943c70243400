"""Rendering: values into prompt text, formatting classes, tokens, prompts and templates."""
