#!/bin/sh
echo "lab: running experiment ${1:-default}"
