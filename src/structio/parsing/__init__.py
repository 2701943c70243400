"""Parsing: from a model's completion to typed values, never inventing one.

`clean` sets reasoning drafts and fences aside, `locate` finds where each output's text is,
`decode` is the one ladder from JSON-ish text to data, `lenient` holds the loose readings
that have exactly one meaning, and `read` turns text into a value of the declared type.
"""
