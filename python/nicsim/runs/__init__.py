"""One run for a person: its results table, the summary of what limited it, its stall warnings and its progress bar."""
