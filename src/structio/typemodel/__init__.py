"""The type model: what a declared type is, how it is named, and its schemas."""
