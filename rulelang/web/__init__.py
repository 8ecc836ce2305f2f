"""`rulelang serve`: play and edit rule files in the browser (see docs/web.md)."""
