from verifier.entry import script

script()
