"""Write raudit/generators/options.json: every built-in generator's option names and
presets, from its class (raudit.generators.declared). Run it after adding or renaming a
generator's option or preset; tests/generators/test_declared.py fails until then.

    python tools/generator_options.py
"""

from __future__ import annotations

import json

from raudit import generators
from raudit.generators.declared import PATH, table


def main() -> None:
    content = table({name: generators.get(name) for name in generators.BUILT_IN})
    rows = [f" {json.dumps(name)}: {json.dumps(entry)}"
            for name, entry in content["generators"].items()]
    PATH.write_text('{"generators": {\n' + ",\n".join(rows) + "\n}}\n", encoding="utf-8")
    print(f"wrote {PATH} ({len(content['generators'])} generators)")


if __name__ == "__main__":
    main()
