"""The storage kernel's pure rules: what every claim store executes, decided once here.

Draft preparation, interval close and reopen on supersede and revive, slot and successor
decisions, directive normalisation, repair decisions. Stores translate rows to and from
these values and run the statements the rules call for; they decide nothing themselves.
"""
