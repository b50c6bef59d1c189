"""`synth_dialogue`: multi-turn dialogues with a positional emotion shift
(Study B positional).

Each dialogue alternates two voices (turn 0 = user). The assistant always
speaks `neutral`; the user starts in `start_emotion` and shifts to a target
emotion (seeded draw from `shift_emotions`) at turn `shift_turns[0]`
(variant `early`) or `shift_turns[1]` (variant `late`). Both variants share
one transcript and differ only in where the shift happens. Each turn is a clip
(manifest row per variant x turn); the turns of one rendering are joined with
`gap_s` of silence into one dialogue WAV listed in `dialogues.tsv` with its
trajectory ("|"-joined per-turn emotions). Evaluation-only: split `test`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgeaudit.datasets.synth.common import (
    ClipWriter,
    make_voices,
    render,
    rng_for,
    trim_silence,
)
from judgeaudit.datasets.synth.texts import ASSISTANT_LINES, USER_LINES

DATASET = "synth_dialogue"
VARIANTS = ("early", "late")


def role_of(turn: int) -> str:
    return "user" if turn % 2 == 0 else "assistant"


def trajectory(n_turns: int, shift_turn: int, start: str, target: str) -> list[str]:
    return [
        "neutral" if role_of(t) == "assistant" else (target if t >= shift_turn else start)
        for t in range(n_turns)
    ]


def build(cfg: dict, clips_dir, seed: int, sample_rate: int, root=None) -> dict:
    n_turns = cfg["n_turns"]
    shifts = list(cfg["shift_turns"])
    if len(shifts) != 2 or shifts[0] >= shifts[1]:
        raise ValueError(f"{DATASET}: shift_turns must be two increasing turn indices, "
                         f"got {shifts}")
    for t in shifts:
        if t >= n_turns or role_of(t) != "user":
            raise ValueError(f"{DATASET}: shift turn {t} must be a user turn (even index) "
                             f"< n_turns={n_turns}")
    n_user = (n_turns + 1) // 2
    if n_user > len(USER_LINES) or n_turns // 2 > len(ASSISTANT_LINES):
        raise ValueError(f"{DATASET}: n_turns={n_turns} exceeds the dialogue line banks")
    voices = make_voices("dlg", cfg["n_voices"], cfg["variants"], cfg["pitch_offsets"],
                         seed, DATASET)
    if len(voices) < 2:
        raise ValueError(f"{DATASET}: needs at least two voices")
    writer = ClipWriter(DATASET, clips_dir, sample_rate, root)
    gap = np.zeros(int(round(cfg["gap_s"] * sample_rate)), dtype=np.float32)
    dialogues = []
    for d in range(cfg["n_dialogues"]):
        dialogue_id = f"dlg_{d:03d}"
        rng = rng_for(seed, DATASET, dialogue_id)
        u_idx, a_idx = rng.choice(len(voices), 2, replace=False)
        user, assistant = voices[int(u_idx)], voices[int(a_idx)]
        u_lines = [USER_LINES[i] for i in rng.choice(len(USER_LINES), n_user, replace=False)]
        a_lines = [ASSISTANT_LINES[i] for i in rng.choice(len(ASSISTANT_LINES),
                                                          n_turns // 2, replace=False)]
        target = cfg["shift_emotions"][int(rng.integers(len(cfg["shift_emotions"])))]
        texts = [u_lines[t // 2] if role_of(t) == "user" else a_lines[t // 2]
                 for t in range(n_turns)]
        for variant, shift in zip(VARIANTS, shifts, strict=True):
            traj = trajectory(n_turns, shift, cfg["start_emotion"], target)
            pieces = []
            for t in range(n_turns):
                role = role_of(t)
                voice = user if role == "user" else assistant
                clip_id = f"{dialogue_id}_{variant}_t{t:02d}"
                x = trim_silence(render(texts[t], voice, sample_rate, traj[t],
                                        cfg["intensity"], rng_for(seed, DATASET, clip_id)),
                                 sample_rate)
                writer.write(clip_id, x, voice.speaker, "test", dialogue_id=dialogue_id,
                             variant=variant, turn_index=t, role=role, emotion=traj[t],
                             transcript=texts[t], voice=voice.label)
                pieces += [x, gap] if t < n_turns - 1 else [x]
            full_id = f"{dialogue_id}_{variant}_full"
            row = writer.write(full_id, np.concatenate(pieces), user.speaker, "test",
                               add_row=False)
            dialogues.append({"dialogue_id": dialogue_id, "variant": variant,
                              "shift_turn": shift, "n_turns": n_turns, "clip_id": full_id,
                              "path": row["path"], "sha256": row["sha256"],
                              "duration_s": row["duration_s"], "target_emotion": target,
                              "user_voice": user.label, "assistant_voice": assistant.label,
                              "trajectory": "|".join(traj)})
    return {"manifest.tsv": writer.manifest(), "dialogues.tsv": pd.DataFrame(dialogues)}
