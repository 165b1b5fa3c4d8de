"""Ranking a catalog's offers for one job: scope, machine shapes, costs, reasons; pure."""
