.PHONY: test lint typecheck docs bench

test:
	uv run pytest

lint:
	uv run ruff check packages && uv run ruff format --check packages

typecheck:
	uv run pyright

docs:
	uv run mkdocs build --strict

bench:
	for f in bench/*_bench.py; do uv run python $$f; done
