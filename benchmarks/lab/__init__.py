"""One-off investigations, each answering one question about a cost the model counts."""
