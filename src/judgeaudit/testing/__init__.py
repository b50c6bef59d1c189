"""Test support: fakes and fixtures the tests and benchmarks use (a fake HTTP
judge provider, toy voices, a tone-pitch perception, tiny real-corpus trees).

Nothing in the workflow imports this package, so it lies outside every script's
import closure (judgeaudit.codedeps): editing a fake never re-runs a rule. Tests hand
`ToneFakePerception` to an adapter directly (`testing.perception.tone_adapter`)."""
