import matplotlib

# Tests draw figures off-screen; notebooks choose their own backend.
matplotlib.use("Agg")
