"""Modes and config options: what a session offers, its current values, and changing them."""

from __future__ import annotations

from typing import TypeAlias

from acp.schema import (
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

from ..config import AgentOptions, BooleanOption, SelectOption
from ..errors import ConfigError, UserError
from ..permissions import Mode
from ..runner.types import ClientInfo, Session

__all__ = ["MODEL_OPTION", "MODE_OPTION", "SessionOptions", "WireConfigOption"]

MODE_OPTION = "mode"
"""Id of the config option mirroring the session mode."""
MODEL_OPTION = "model"
"""Id of the config option choosing the model."""

WireConfigOption: TypeAlias = SessionConfigOptionSelect | SessionConfigOptionBoolean


class SessionOptions:
    """The modes, models and custom options of an agent, checked once at start-up."""

    def __init__(self, options: AgentOptions) -> None:
        self.modes: tuple[Mode, ...] = tuple(options.modes or ())
        self.models = tuple(options.models)
        self.custom = tuple(options.config_options)
        self.context_window_default = options.context_window
        """The agent-wide context window (`AgentOptions.context_window`)."""
        ids = [m.id for m in self.modes]
        if len(set(ids)) != len(ids):
            raise UserError(f"AgentOptions.modes: duplicate mode ids in {ids}")
        self.default_mode = options.default_mode or (self.modes[0].id if self.modes else None)
        if self.default_mode is not None and self.default_mode not in ids:
            raise UserError(f"AgentOptions.default_mode={self.default_mode!r} is not one of the modes {ids}")
        model_ids = [m.id for m in self.models]
        self.default_model = options.default_model or (model_ids[0] if model_ids else None)
        if self.default_model is not None and self.default_model not in model_ids:
            raise UserError(f"AgentOptions.default_model={self.default_model!r} is not one of the models {model_ids}")
        custom_ids = [o.id for o in self.custom]
        reserved = {MODE_OPTION, MODEL_OPTION} & set(custom_ids)
        if reserved or len(set(custom_ids)) != len(custom_ids):
            raise UserError(
                f"AgentOptions.config_options: ids must be unique and not {sorted({MODE_OPTION, MODEL_OPTION})}"
            )
        for opt in self.custom:
            if isinstance(opt, SelectOption) and opt.default not in {v.value for v in opt.values}:
                raise UserError(f"config option {opt.id!r}: default {opt.default!r} is not one of its values")

    # --- initial values -----------------------------------------------------------------------

    def context_window(self, session: Session, model_id: str | None = None) -> int | None:
        """The context window of `model_id` (default: the session's model): its `ModelOption`'s, else the agent's."""
        chosen = model_id or session.config.get("model", self.default_model)
        for model in self.models:
            if model.id == chosen and model.context_window is not None:
                return model.context_window
        return self.context_window_default

    def initialise(self, session: Session) -> None:
        """Give a new session the default mode and option values."""
        session.mode_id = self.default_mode
        if self.default_mode is not None:
            session.config[MODE_OPTION] = self.default_mode
        if self.default_model is not None:
            session.config[MODEL_OPTION] = self.default_model
        for opt in self.custom:
            session.config[opt.id] = opt.default

    def mode(self, session: Session) -> Mode | None:
        """The session's current mode."""
        for m in self.modes:
            if m.id == session.mode_id:
                return m
        return None

    # --- wire shapes -----------------------------------------------------------------------------

    def mode_state(self, session: Session) -> SessionModeState | None:
        """`modes` of the session responses, `None` when the agent has no modes."""
        if not self.modes or session.mode_id is None:
            return None
        return SessionModeState(
            current_mode_id=session.mode_id,
            available_modes=[SessionMode(id=m.id, name=m.name, description=m.description) for m in self.modes],
        )

    def wire_options(self, session: Session, client: ClientInfo) -> list[WireConfigOption] | None:
        """The complete config option list for this session and client, `None` when there is none."""
        out: list[WireConfigOption] = []
        if self.modes and session.mode_id is not None:
            out.append(
                SessionConfigOptionSelect(
                    type="select",
                    id=MODE_OPTION,
                    name="Mode",
                    category="mode",
                    current_value=session.mode_id,
                    options=[
                        SessionConfigSelectOption(value=m.id, name=m.name, description=m.description)
                        for m in self.modes
                    ],
                )
            )
        if self.models:
            out.append(
                SessionConfigOptionSelect(
                    type="select",
                    id=MODEL_OPTION,
                    name="Model",
                    category="model",
                    current_value=str(session.config.get(MODEL_OPTION, self.default_model)),
                    options=[
                        SessionConfigSelectOption(value=m.id, name=m.name or m.id, description=m.description)
                        for m in self.models
                    ],
                )
            )
        for opt in self.custom:
            if isinstance(opt, SelectOption):
                out.append(
                    SessionConfigOptionSelect(
                        type="select",
                        id=opt.id,
                        name=opt.name,
                        description=opt.description,
                        category=opt.category,
                        current_value=str(session.config.get(opt.id, opt.default)),
                        options=[
                            SessionConfigSelectOption(value=v.value, name=v.name, description=v.description)
                            for v in opt.values
                        ],
                    )
                )
            elif client.boolean_config_options:
                out.append(
                    SessionConfigOptionBoolean(
                        type="boolean",
                        id=opt.id,
                        name=opt.name,
                        description=opt.description,
                        current_value=bool(session.config.get(opt.id, opt.default)),
                    )
                )
        return out or None

    # --- changes ----------------------------------------------------------------------------------

    def set_mode(self, session: Session, mode_id: str) -> None:
        """Switch mode (also the `mode` option); raises `ConfigError` for an unknown id."""
        ids = [m.id for m in self.modes]
        if mode_id not in ids:
            raise ConfigError(f"unknown mode {mode_id!r}; available modes: {ids}")
        session.mode_id = mode_id
        session.config[MODE_OPTION] = mode_id

    def set_option(self, session: Session, config_id: str, value: str | bool, client: ClientInfo) -> None:
        """Change one option; raises `ConfigError` for an unknown id or value."""
        if config_id == MODE_OPTION and self.modes:
            if not isinstance(value, str):
                raise ConfigError("config option 'mode' takes a mode id")
            self.set_mode(session, value)
            return
        if config_id == MODEL_OPTION and self.models:
            ids = [m.id for m in self.models]
            if value not in ids:
                raise ConfigError(f"unknown model {value!r}; available models: {ids}")
            session.config[MODEL_OPTION] = value
            return
        for opt in self.custom:
            if opt.id != config_id:
                continue
            if isinstance(opt, SelectOption):
                values = [v.value for v in opt.values]
                if value not in values:
                    raise ConfigError(f"config option {config_id!r}: unknown value {value!r}; choose one of {values}")
                session.config[config_id] = value
                return
            if isinstance(opt, BooleanOption) and client.boolean_config_options:  # pyright: ignore[reportUnnecessaryIsInstance]
                if not isinstance(value, bool):
                    raise ConfigError(f"config option {config_id!r} is boolean; send type 'boolean' and true/false")
                session.config[config_id] = value
                return
        raise ConfigError(f"unknown config option {config_id!r}")
