"""Named architectures written as layer lists, with the published figures they are checked against."""
