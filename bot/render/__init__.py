"""bot/render"""
