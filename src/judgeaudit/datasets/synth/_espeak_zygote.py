"""espeak-ng fork server (run as a script by `tts.EspeakSynth`; stdlib only).

espeak-ng keeps synthesis state in C statics that no API call resets (pitch
flutter phase, wave phase, filter memories), so an utterance's samples depend
on everything the process synthesised before. This server loads and
initialises the library once, never synthesises itself, and forks a child per
request: every child starts from the same pristine state, so the same request
always gives the same samples, whatever came before.

Protocol (binary pipes): request = one JSON line {text, voice, rate, pitch,
pitch_range, volume, wordgap, ssml}; reply = b"OK <n>\\n" + n bytes of int16
little-endian samples, or b"ERR <message>\\n".
"""

import ctypes
import json
import os
import sys

SYNCHRONOUS = 2
PARAMS = (("rate", 1), ("volume", 2), ("pitch", 3), ("pitch_range", 4), ("wordgap", 7))
CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int,
                            ctypes.c_void_p)


def write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(1, view)
        view = view[n:]


def main(lib_path: str, data_path: str) -> None:
    lib = ctypes.CDLL(lib_path)
    lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
    lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
    lib.espeak_Synth.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int,
                                 ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p]
    has_seed = hasattr(lib, "espeak_ng_SetRandSeed")
    if has_seed:
        lib.espeak_ng_SetRandSeed.argtypes = [ctypes.c_long]
    chunks: list[bytes] = []

    def collect(wav, n, events):
        if wav and n > 0:
            chunks.append(ctypes.string_at(wav, 2 * n))
        return 0

    callback = CALLBACK(collect)
    rate = lib.espeak_Initialize(SYNCHRONOUS, 0, data_path.encode(), 0)
    if rate <= 0:
        write_all(f"ERR espeak_Initialize failed for {data_path}\n".encode())
        return
    lib.espeak_SetSynthCallback(callback)
    # Load the English dictionary once (children inherit it; loading is what costs
    # time, synthesis state is untouched by it).
    lib.espeak_SetVoiceByName(b"en-us")
    libc = ctypes.CDLL(None)
    write_all(f"READY {rate}\n".encode())
    for line in sys.stdin.buffer:
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:  # child: synthesise from the pristine state, reply, exit
            try:
                if lib.espeak_SetVoiceByName(req["voice"].encode()) != 0:
                    write_all(f"ERR unknown espeak-ng voice {req['voice']!r}\n".encode())
                    os._exit(0)
                for name, code in PARAMS:
                    if lib.espeak_SetParameter(code, int(req[name]), 0) != 0:
                        write_all(f"ERR espeak_SetParameter({name}={req[name]}) failed\n"
                                  .encode())
                        os._exit(0)
                if has_seed:
                    lib.espeak_ng_SetRandSeed(0)
                libc.srand(0)
                buf = ctypes.create_string_buffer(req["text"].encode())
                flags = 1 | (0x10 if req.get("ssml") else 0)
                err = lib.espeak_Synth(buf, len(buf), 0, 1, 0, flags, None, None)
                lib.espeak_Synchronize()
                if err != 0:
                    write_all(f"ERR espeak_Synth failed with code {err}\n".encode())
                else:
                    data = b"".join(chunks)
                    write_all(f"OK {len(data)}\n".encode() + data)
            except BaseException as exc:  # noqa: BLE001 - report anything to the client
                write_all(f"ERR {type(exc).__name__}: {exc}\n".replace("\n", " ").encode()
                          + b"\n")
            os._exit(0)
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
