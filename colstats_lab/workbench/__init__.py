"""Where a person meets the lab: the IPython magics and the Voila dashboard, both over `Lab`."""
