machine.image tiles "0" {code_address = "0x4c000", code = "0x0000000033000000", entries = {main = "0x4c000"}, zero = [], data = []}
