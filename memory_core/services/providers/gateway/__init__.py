"""The provider gateway: every embedding and text call goes through it."""
