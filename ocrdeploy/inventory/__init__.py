"""Hosts, groups and their vars: Ansible YAML and INI inventories, host patterns, plus ~/.ssh/config aliases."""

from .model import Host, Inventory, load_inventory, find_inventory_path, select_hosts

__all__ = ["Host", "Inventory", "load_inventory", "find_inventory_path", "select_hosts"]
