"""Regenerate the paper figures from the library, with the plotted data saved beside each plot."""
