"""The pure sizing core: model statistics, memory, time, the rest of the machine, warnings and advice."""
