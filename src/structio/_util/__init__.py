"""Small utilities every layer may use: they import nothing of structio but `exceptions`."""
