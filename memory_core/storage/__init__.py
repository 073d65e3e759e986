"""The storage kernel's pure rules: what every claim store executes, decided once here.

Draft preparation (`drafts`), the insert decision (`admission`), supersede's checks and
successor (`succession`), interval close and reopen on supersede and revive (`intervals`),
directive normalisation and capacity (`directives`), tombstone identities of stored rows
(`tombstones`) and repair decisions (`repair`). Stores translate rows to and from these
values and run the statements the rules call for; they decide nothing themselves. This
package sits above the ports and below the services: it imports domain and ports only.
"""
