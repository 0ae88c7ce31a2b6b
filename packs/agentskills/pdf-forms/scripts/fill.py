"""Tiny stand-in for a PDF form filler used by the pdf-forms example skill."""
import json
import sys


def main(argv):
    if len(argv) == 3 and argv[1] == "--list":
        print(f"would list fields of {argv[2]}")
        return 0
    if len(argv) != 4:
        print("usage: fill.py FORM.pdf ANSWERS.json OUT.pdf | fill.py --list FORM.pdf")
        return 2
    with open(argv[2], encoding="utf-8") as fh:
        answers = json.load(fh)
    print(f"would write {len(answers)} fields from {argv[1]} to {argv[3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
