"""The standardized GenoTEX regression pipeline (spec/regression.md)."""
