"""The Lark grammar of TVMScript (tvmscript.lark)."""
