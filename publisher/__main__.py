from publisher.entry import script

script()
