print("gamelog")
