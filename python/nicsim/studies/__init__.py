"""Studies and reports: a publication's sweeps, plots and published figures (`study`), reproducing and validating them, the sensitivity runs, and the HTML report and docs/validation.md they make."""
