#!/bin/sh
# Placeholder fetcher for the weather-report skill.
echo "fetching forecast for ${1:-unknown place}"
