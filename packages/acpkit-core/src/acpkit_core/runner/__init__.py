"""The runner contract: what an adapter implements and everything a turn hands it.

[`protocols`][acpkit_core.runner.protocols] holds the protocols (`Runner`, `Turn`, `Emitter`) and
[`types`][acpkit_core.runner.types] the value types they exchange; the other modules are the
parts of a turn (emitter, tool-call lifecycle, tool presentation, plan, questions, the client's
files and terminal, stop reasons, warm-up). The names are exported from `acpkit_core` itself.
"""
