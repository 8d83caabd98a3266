"""What each task does, host by host: the room between the invoke tasks and the domain rooms.

A module per task family; `hosts` opens the session and maps a function over the hosts.
Nothing below this package imports it.
"""
