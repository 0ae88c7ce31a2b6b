#!/bin/sh
echo "lab: state reset"
